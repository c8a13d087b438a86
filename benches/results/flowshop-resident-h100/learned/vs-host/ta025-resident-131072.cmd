2026-11-24T19:04:26Z .gpu/simtlab flowshop solve ta025 --search resident --pool 131072 --time-limit 10 --json
