2026-11-28T20:12:10Z .gpu/simtlab flowshop solve ta050 --bound lb2 --time-limit 30 --search resident --pool 65536 --json
