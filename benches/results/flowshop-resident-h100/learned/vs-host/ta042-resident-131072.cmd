2026-11-24T19:05:23Z .gpu/simtlab flowshop solve ta042 --search resident --pool 131072 --time-limit 10 --json
