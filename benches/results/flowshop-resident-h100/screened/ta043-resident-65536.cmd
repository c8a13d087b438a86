2026-11-24T15:28:45Z .gpu/simtlab flowshop solve ta043 --search resident --pool 65536 --time-limit 20 --json
