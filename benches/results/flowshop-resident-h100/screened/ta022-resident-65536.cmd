2026-11-24T15:25:57Z .gpu/simtlab flowshop solve ta022 --search resident --pool 65536 --time-limit 20 --json
