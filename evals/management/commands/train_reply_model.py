"""Rebuild the learned reply reader from the labelled replies (deterministic)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evals import reply_model
from outreach.replies.examples import EXAMPLES
from outreach.replies.reader import ARTIFACT


class Command(BaseCommand):
    help = (
        "Train the reply reader from evals/data/replies (all files but the sealed holdout), "
        "calibrate it and set its escalation threshold on grouped held-out readings, and "
        "write outreach/replies/reader.json.gz and the labelled replies a model is shown "
        "(examples.json.gz). --check only compares with the committed files."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="exit 1 if retraining does not reproduce the committed artifact byte for byte",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        training = reply_model.train(settings.REPLY_CONFIDENCE_THRESHOLD)
        built = {
            ARTIFACT: reply_model.artifact_bytes(training.document),
            EXAMPLES: reply_model.artifact_bytes(training.examples_document),
        }
        self._report(training, len(built[ARTIFACT]))
        if options["check"]:
            for path, data in built.items():
                if not path.exists() or path.read_bytes() != data:
                    raise CommandError(
                        f"{path.name} is not what training builds: run train_reply_model"
                    )
                self.stdout.write(f"{path.name} is reproduced exactly")
            return
        for path, data in built.items():
            path.write_bytes(data)
            self.stdout.write(f"wrote {path} ({len(data) / 1024:.0f} KiB)")

    def _report(self, training: reply_model.Training, size: int) -> None:
        document = training.document
        policy = reply_model.Policy(
            document["escalation_threshold"],
            settings.REPLY_CONFIDENCE_THRESHOLD,
            document["review_threshold"],
        )
        held = reply_model.score(training.examples, training.held_out_probs, policy)
        features = sum(len(block["terms"]) for block in document["blocks"])
        self.stdout.write(
            f"trained on {document['meta']['replies']} replies "
            f"({', '.join(document['meta']['trained_on'])}); {features} features; "
            f"temperature {document['temperature']}; "
            f"escalation threshold {document['escalation_threshold']:.2f}, "
            f"review threshold {document['review_threshold']:.2f}"
        )
        self.stdout.write(
            "grouped held-out (one source out at a time): "
            f"bucket accuracy {held['bucket_accuracy']:.1%}, "
            f"escalation recall {held['escalation_recall']:.1%} of {held['escalations']}, "
            "escalations acted on without a person "
            f"{held['escalations_acted_on_without_a_person']}, "
            f"automation {held['automation']:.1%}"
        )
        self.stdout.write(
            "by language (bucket accuracy, escalation recall, acted on alone, ordinary replies "
            f"to a person); read: {', '.join(document['languages'])}"
        )
        by_language = reply_model.score_by_language(
            training.examples, training.held_out_probs, policy
        )
        for language, figures in by_language.items():
            self.stdout.write(
                f"  {language:<4} {figures['replies']:>5}  {figures['bucket_accuracy']:.1%}  "
                f"{figures['escalation_recall']:.1%}  "
                f"{figures['escalations_acted_on_without_a_person']}  "
                f"{figures['ordinary_to_person_rate']:.1%}"
            )
        self.stdout.write("threshold for a person → recall, acted on alone, automation, accuracy:")
        rows = reply_model.tradeoff(
            training.examples,
            training.held_out_probs,
            settings.REPLY_CONFIDENCE_THRESHOLD,
            document["escalation_threshold"],
        )
        for row in rows:
            self.stdout.write(
                f"  {row['threshold']:.2f}  {row['escalation_recall']:.1%}  "
                f"{row['acted_alone']}  {row['automation']:.1%}  {row['bucket_accuracy']:.1%}"
            )
