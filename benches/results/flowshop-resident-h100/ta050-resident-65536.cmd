2026-11-24T03:23:49Z .gpu/simtlab flowshop solve ta050 --search resident --pool 65536 --time-limit 8 --json
