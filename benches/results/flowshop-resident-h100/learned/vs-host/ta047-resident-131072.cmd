2026-11-24T19:05:54Z .gpu/simtlab flowshop solve ta047 --search resident --pool 131072 --time-limit 10 --json
