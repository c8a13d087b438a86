2026-11-28T20:11:38Z .gpu/simtlab flowshop solve ta030 --bound lb2 --ub 2178 --time-limit 60 --search resident --pool 65536 --json
