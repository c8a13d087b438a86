2026-11-28T20:11:28Z .gpu/simtlab flowshop solve ta024 --bound lb2 --ub 2223 --time-limit 60 --search resident --pool 65536 --json
