2026-11-24T10:22:39Z .gpu/simtlab flowshop solve ta048 --search host --pool 4096 --time-limit 20 --json
