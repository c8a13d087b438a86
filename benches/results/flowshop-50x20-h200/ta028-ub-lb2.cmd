2026-11-28T20:11:36Z .gpu/simtlab flowshop solve ta028 --bound lb2 --ub 2200 --time-limit 60 --search resident --pool 65536 --json
