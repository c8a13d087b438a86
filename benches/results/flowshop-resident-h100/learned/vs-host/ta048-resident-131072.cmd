2026-11-24T19:06:06Z .gpu/simtlab flowshop solve ta048 --search resident --pool 131072 --time-limit 10 --json
