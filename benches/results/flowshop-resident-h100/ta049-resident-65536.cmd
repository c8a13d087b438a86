2026-11-24T03:23:48Z .gpu/simtlab flowshop solve ta049 --search resident --pool 65536 --time-limit 8 --json
