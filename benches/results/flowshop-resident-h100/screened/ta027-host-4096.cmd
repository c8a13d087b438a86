2026-11-24T15:27:46Z .gpu/simtlab flowshop solve ta027 --search host --pool 4096 --time-limit 20 --json
