2026-11-24T10:19:58Z .gpu/simtlab flowshop solve ta025 --search host --pool 4096 --time-limit 20 --json
