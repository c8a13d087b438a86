2026-11-24T19:06:13Z .gpu/simtlab flowshop solve ta050 --search host --pool 4096 --time-limit 10 --json
