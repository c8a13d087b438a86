2026-11-24T03:23:38Z .gpu/simtlab flowshop solve ta043 --search resident --pool 65536 --time-limit 8 --json
