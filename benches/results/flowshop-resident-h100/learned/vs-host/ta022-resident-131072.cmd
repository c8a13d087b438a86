2026-11-24T19:03:44Z .gpu/simtlab flowshop solve ta022 --search resident --pool 131072 --time-limit 10 --json
