2026-11-24T19:05:16Z .gpu/simtlab flowshop solve ta030 --search resident --pool 131072 --time-limit 10 --json
