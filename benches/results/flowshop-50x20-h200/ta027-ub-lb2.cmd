2026-11-28T20:11:34Z .gpu/simtlab flowshop solve ta027 --bound lb2 --ub 2273 --time-limit 60 --search resident --pool 65536 --json
