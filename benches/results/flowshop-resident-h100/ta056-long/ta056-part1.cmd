2026-11-24T06:35:49Z .gpu/simtlab flowshop solve ta056 --search resident --pool 65536 --time-limit 265 --checkpoint /tmp/ta056.ckpt --checkpoint-every 120
