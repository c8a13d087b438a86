2026-11-28T20:11:30Z .gpu/simtlab flowshop solve ta025 --bound lb2 --ub 2291 --time-limit 60 --search resident --pool 65536 --json
