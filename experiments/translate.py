"""Train and evaluate the English→Spanish translation Transformer (standard or projection).

Examples:
    python experiments/translate.py fit --config experiments/configs/translate_standard.yaml
    python experiments/translate.py fit --config experiments/configs/translate_projection.yaml \
        --data.sequence_length 10 --trainer.precision bf16-mixed
    # resume an interrupted run from its last checkpoint
    python experiments/translate.py fit --config experiments/configs/translate_standard.yaml \
        --ckpt_path runs/translate/standard/checkpoints/last.ckpt
    # two processes (CPU or GPU)
    python experiments/translate.py fit --config ... --trainer.strategy ddp --trainer.devices 2

See docs/translation.md.
"""

from tssdpa.translation.cli import main

if __name__ == "__main__":
    main()
