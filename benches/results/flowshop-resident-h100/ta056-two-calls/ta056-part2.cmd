2026-11-24T19:22:18Z .gpu/simtlab flowshop solve ta056 --search resident --pool 65536 --time-limit 120 --resume /tmp/ta056.ckpt.part1 --checkpoint /tmp/ta056.ckpt
