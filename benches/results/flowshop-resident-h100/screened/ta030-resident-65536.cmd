2026-11-24T15:28:16Z .gpu/simtlab flowshop solve ta030 --search resident --pool 65536 --time-limit 20 --json
