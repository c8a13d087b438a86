2026-11-24T10:22:11Z .gpu/simtlab flowshop solve ta045 --search resident --pool 65536 --time-limit 20 --json
