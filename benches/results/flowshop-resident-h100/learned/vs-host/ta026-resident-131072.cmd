2026-11-24T19:04:39Z .gpu/simtlab flowshop solve ta026 --search resident --pool 131072 --time-limit 10 --json
