2026-11-24T15:27:43Z .gpu/simtlab flowshop solve ta027 --search resident --pool 65536 --time-limit 20 --json
