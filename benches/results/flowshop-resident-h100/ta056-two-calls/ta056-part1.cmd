2026-11-24T19:13:16Z .gpu/simtlab flowshop solve ta056 --search resident --pool 65536 --time-limit 530 --checkpoint /tmp/ta056.ckpt --checkpoint-every 120
