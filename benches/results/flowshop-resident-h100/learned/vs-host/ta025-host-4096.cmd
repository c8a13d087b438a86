2026-11-24T19:04:28Z .gpu/simtlab flowshop solve ta025 --search host --pool 4096 --time-limit 10 --json
