2026-11-28T20:10:18Z .gpu/simtlab flowshop solve ta056 --bound lb2 --time-limit 60 --search resident --pool 65536 --json
