# legacy: 0.4.13
# findings: none
"""A sharded embedding table object holding a GDA built in __init__ (2022)."""
import jax
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray


class ShardedTable:
    def __init__(self, mesh, rows, dim):
        self.mesh = mesh
        table = np.arange(rows * dim, dtype=np.float32).reshape(rows, dim) / 10.0
        self.table = GlobalDeviceArray.from_callback((rows, dim), mesh, P("rows", None), lambda i: table[i])

    def rows_on(self, device_id):
        for shard in self.table.local_shards:
            if shard.device.id == device_id:
                return shard.index[0].start, shard.index[0].stop
        return None

    def first_block(self):
        """The first local shard's data, on the host."""
        return np.asarray(self.table.local_data(0))

    def spec(self):
        return tuple(self.table.mesh_axes)

    def axis_names(self):
        return self.table.mesh.axis_names


if __name__ == "__main__":
    mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("rows", "cols"))
    table = ShardedTable(mesh, rows=8, dim=3)
    print("spec", table.spec(), "axes", table.axis_names())
    print("rows on device 0", table.rows_on(0), "device 5", table.rows_on(5))
    print("first block", table.first_block().tolist())
    print("shards", len(table.table.local_shards))
