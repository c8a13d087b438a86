2026-11-24T19:06:11Z .gpu/simtlab flowshop solve ta050 --search resident --pool 131072 --time-limit 10 --json
