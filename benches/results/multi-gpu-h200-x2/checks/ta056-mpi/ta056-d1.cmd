.gpu/simtlab flowshop solve ta056 --search resident --pool 65536 --time-limit 60 --json
