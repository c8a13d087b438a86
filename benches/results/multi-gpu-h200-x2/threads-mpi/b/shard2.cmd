.gpu/simtlab reproduce --quick --shard 2/2 --adapter #1
