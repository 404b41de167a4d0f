"""The layers: every norm chosen by name from one registry (norms) and the hand-written
autograd kernels behind DyT and the DyT/LayerNorm mix (kernels).
"""
