2026-11-24T03:23:42Z .gpu/simtlab flowshop solve ta045 --search resident --pool 65536 --time-limit 8 --json
