2026-11-28T20:11:59Z .gpu/simtlab flowshop solve ta041 --bound lb2 --time-limit 30 --search resident --pool 65536 --json
