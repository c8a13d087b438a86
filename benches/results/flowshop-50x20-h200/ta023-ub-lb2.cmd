2026-11-28T20:11:22Z .gpu/simtlab flowshop solve ta023 --bound lb2 --ub 2326 --time-limit 60 --search resident --pool 65536 --json
