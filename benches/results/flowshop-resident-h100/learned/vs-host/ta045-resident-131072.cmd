2026-11-24T19:05:50Z .gpu/simtlab flowshop solve ta045 --search resident --pool 131072 --time-limit 10 --json
