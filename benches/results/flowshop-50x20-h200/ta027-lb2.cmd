2026-11-28T20:11:55Z .gpu/simtlab flowshop solve ta027 --bound lb2 --time-limit 60 --search resident --pool 65536 --json
