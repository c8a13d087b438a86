2026-11-24T19:05:36Z .gpu/simtlab flowshop solve ta043 --search resident --pool 131072 --time-limit 10 --json
