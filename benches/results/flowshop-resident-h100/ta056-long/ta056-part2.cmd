2026-11-24T06:40:18Z .gpu/simtlab flowshop solve ta056 --search resident --pool 65536 --time-limit 265 --resume /tmp/ta056.ckpt.part1 --checkpoint /tmp/ta056.ckpt
