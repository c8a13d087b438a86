2026-11-28T20:12:34Z .gpu/simtlab flowshop solve ta056 --bound lb2 --search resident --pool 65536 --time-limit 370 --checkpoint /tmp/ta056.ckpt --checkpoint-every 120 --json
