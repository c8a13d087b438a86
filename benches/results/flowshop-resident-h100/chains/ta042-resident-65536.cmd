2026-11-24T10:21:32Z .gpu/simtlab flowshop solve ta042 --search resident --pool 65536 --time-limit 20 --json
