2026-11-24T15:27:01Z .gpu/simtlab flowshop solve ta025 --search host --pool 4096 --time-limit 20 --json
