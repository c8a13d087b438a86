.gpu/simtlab reproduce --quick --shard 1/2 --adapter #0
