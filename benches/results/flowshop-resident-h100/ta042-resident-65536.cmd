2026-11-24T03:23:32Z .gpu/simtlab flowshop solve ta042 --search resident --pool 65536 --time-limit 8 --json
