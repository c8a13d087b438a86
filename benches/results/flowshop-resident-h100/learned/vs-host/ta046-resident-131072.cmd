2026-11-24T19:05:53Z .gpu/simtlab flowshop solve ta046 --search resident --pool 131072 --time-limit 10 --json
