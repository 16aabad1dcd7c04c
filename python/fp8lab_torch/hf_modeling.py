"""fp8lab's GPT for Hugging Face transformers (`fp8lab export --format hf` writes this file as
modeling_fp8lab.py, beside model.py, config.json and model.safetensors):

    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(DIR, trust_remote_code=True)
    logits = model(input_ids).logits

The module tree is fp8lab's own (model.py: wte, wpe, blocks, ln_f), so the weights keep the
checkpoint's tensor names. from_pretrained(..., fp8lab_mixed=True) computes as fp8lab's mixed
precision (model.py). Logits and the loss only: no key/value cache for generate().
"""
import torch.nn as nn
import torch.nn.functional as F
from transformers import PreTrainedModel
from transformers.modeling_outputs import CausalLMOutput

from .model import Linear, RMSNorm, build_gpt, gpt_logits

try:  # transformers 5 renamed the base class; 4.x has the old name only
    from transformers import PreTrainedConfig as _BaseConfig
except ImportError:
    from transformers import PretrainedConfig as _BaseConfig


class Fp8labGPTConfig(_BaseConfig):
    model_type = "fp8lab_gpt"
    attribute_map = {"hidden_size": "d_model", "num_hidden_layers": "n_layers",
                     "num_attention_heads": "n_heads", "max_position_embeddings": "seq_len"}

    def __init__(self, vocab_size=256, d_model=128, n_layers=4, n_heads=4, seq_len=128,
                 norm_eps=1e-5, init_std=0.02, fp8lab_mixed=False, **kwargs):
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.seq_len = seq_len
        self.norm_eps = norm_eps
        self.init_std = init_std
        self.fp8lab_mixed = fp8lab_mixed
        kwargs.setdefault("tie_word_embeddings", False)  # the head reads wte itself
        super().__init__(**kwargs)

    def model_config(self):
        """fp8lab's model_config (docs/checkpoint-format.md)."""
        return {"vocab_size": self.vocab_size, "d_model": self.d_model,
                "n_layers": self.n_layers, "n_heads": self.n_heads, "seq_len": self.seq_len,
                "norm_eps": self.norm_eps, "init_std": self.init_std}


class Fp8labGPTForCausalLM(PreTrainedModel):
    config_class = Fp8labGPTConfig
    base_model_prefix = "fp8lab_gpt"
    main_input_name = "input_ids"

    def __init__(self, config):
        super().__init__(config)
        build_gpt(self, config.model_config(), mixed=config.fp8lab_mixed)
        self.post_init()

    def _init_weights(self, module):
        # fp8lab's initialisation scale (its exact values come from its own Philox stream).
        std = self.config.init_std
        if isinstance(module, RMSNorm):
            module.weight.data.fill_(1.0)
        elif isinstance(module, (nn.Embedding, Linear)):
            module.weight.data.normal_(0.0, std)

    def get_input_embeddings(self):
        return self.wte

    def set_input_embeddings(self, value):
        self.wte = value

    def get_output_embeddings(self):
        return None  # the head is wte itself (tied by construction)

    def forward(self, input_ids, labels=None, return_dict=None, **kwargs):
        """logits [B, T, vocab] (fp32); with labels (the inputs, as transformers' causal LMs
        take them: shifted here, -100 ignored) also the mean next-token cross-entropy."""
        logits = gpt_logits(self, input_ids)
        loss = None
        if labels is not None:
            shifted = logits[:, :-1].float()
            loss = F.cross_entropy(shifted.reshape(-1, shifted.shape[-1]),
                                   labels[:, 1:].reshape(-1), ignore_index=-100)
        if return_dict is False:
            return (loss, logits) if loss is not None else (logits,)
        return CausalLMOutput(loss=loss, logits=logits)


__all__ = ["Fp8labGPTConfig", "Fp8labGPTForCausalLM"]
