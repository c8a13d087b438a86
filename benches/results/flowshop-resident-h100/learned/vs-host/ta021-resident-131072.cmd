2026-11-24T19:03:31Z .gpu/simtlab flowshop solve ta021 --search resident --pool 131072 --time-limit 10 --json
