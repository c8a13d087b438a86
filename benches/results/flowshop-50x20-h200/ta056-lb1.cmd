2026-11-28T20:09:17Z .gpu/simtlab flowshop solve ta056 --bound lb1 --time-limit 60 --search resident --pool 65536 --json
