2026-11-28T20:11:18Z .gpu/simtlab flowshop solve ta021 --bound lb2 --ub 2297 --time-limit 60 --search resident --pool 65536 --json
