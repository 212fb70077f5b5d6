# legacy: 0.4.13
# findings: none
#!/usr/bin/env python
# coding: utf-8
# Converted from "Distributed arrays and automatic parallelization.ipynb" (early 2023).

# In[1]:


import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PositionalSharding

# In[2]:


x = jnp.asarray(np.random.RandomState(0).randn(8, 8).astype(np.float32))
print("devices", len(jax.devices()))

# In[3]:


sharding = PositionalSharding(jax.devices())
y = jax.device_put(x, sharding.reshape(8, 1))
print("y shards", len(y.addressable_shards), sorted({s.data.shape for s in y.addressable_shards}))

# In[4]:


z = jax.device_put(x, sharding.reshape(4, 2))
print("z shards", sorted({s.data.shape for s in z.addressable_shards}))

# In[5]:


w = jax.device_put(x, sharding.reshape(4, 2).replicate(0))
print("w shards", sorted({s.data.shape for s in w.addressable_shards}))

# In[6]:


def f(a):
    return jnp.sin(a) * 2 + 1


out = jax.jit(f)(z)
print("out sum", round(float(out.sum()), 3))
print("out shard shapes", sorted({s.data.shape for s in out.addressable_shards}))

# In[7]:


row_sums = jnp.sum(z, axis=1)
print("row sums", np.round(np.asarray(row_sums), 3).tolist())
print("replicated over", len(sharding.replicate().device_set))
