2026-11-24T15:29:26Z .gpu/simtlab flowshop solve ta049 --search resident --pool 65536 --time-limit 20 --json
